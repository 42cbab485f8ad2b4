"""The CycleGAN and pix2pix repository's networks and training steps, small: get_norm_layer as a
functools.partial of InstanceNorm2d (affine=False) or BatchNorm2d, use_bias decided by
norm_layer.func == nn.InstanceNorm2d, a ResnetGenerator (ReflectionPad2d(3), strided Conv2d down,
ResnetBlocks with ReflectionPad2d(1) and ReLU(True), ConvTranspose2d(output_padding=1) up, Tanh),
the UnetGenerator built inside out from UnetSkipConnectionBlocks (torch.cat([x, self.model(x)], 1),
LeakyReLU(0.2, True)), the PatchGAN NLayerDiscriminator, init_weights by class name with
init.normal_(m.weight.data, 0.0, 0.02), GANLoss with registered real/fake label buffers expanded
as the prediction (lsgan MSELoss, vanilla BCEWithLogitsLoss), the ImagePool of generated images,
set_requires_grad to freeze the discriminators, Adam over itertools.chain of both generators, a
LambdaLR linear decay; the CycleGAN step (identity, GAN and cycle losses) and the pix2pix step
(conditional D on torch.cat((real_A, fake_B), 1), L1 weighted by lambda_L1)."""
import functools
import itertools
import random

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from


def networks(torch):
    nn, init = torch.nn, torch.nn.init

    def get_norm_layer(norm_type='instance'):
        if norm_type == 'batch':
            norm_layer = functools.partial(nn.BatchNorm2d, affine=True, track_running_stats=True)
        elif norm_type == 'instance':
            norm_layer = functools.partial(nn.InstanceNorm2d, affine=False, track_running_stats=False)
        else:
            raise NotImplementedError('normalization layer [%s] is not found' % norm_type)
        return norm_layer

    def init_weights(net, init_type='normal', init_gain=0.02):
        def init_func(m):  # define the initialization function
            classname = m.__class__.__name__
            if hasattr(m, 'weight') and (classname.find('Conv') != -1 or classname.find('Linear') != -1):
                if init_type == 'normal':
                    init.normal_(m.weight.data, 0.0, init_gain)
                elif init_type == 'xavier':
                    init.xavier_normal_(m.weight.data, gain=init_gain)
                if hasattr(m, 'bias') and m.bias is not None:
                    init.constant_(m.bias.data, 0.0)
            elif classname.find('BatchNorm2d') != -1:
                init.normal_(m.weight.data, 1.0, init_gain)
                init.constant_(m.bias.data, 0.0)
        net.apply(init_func)  # apply the initialization function <init_func>

    class ResnetBlock(nn.Module):
        """Define a Resnet block"""
        def __init__(self, dim, padding_type, norm_layer, use_dropout, use_bias):
            super(ResnetBlock, self).__init__()
            self.conv_block = self.build_conv_block(dim, padding_type, norm_layer, use_dropout, use_bias)

        @staticmethod
        def padding(padding_type):
            """The padding layers and the convolution's own padding (the repository writes this twice)."""
            if padding_type == 'reflect':
                return [nn.ReflectionPad2d(1)], 0
            elif padding_type == 'replicate':
                return [nn.ReplicationPad2d(1)], 0
            elif padding_type == 'zero':
                return [], 1
            raise NotImplementedError('padding [%s] is not implemented' % padding_type)

        def build_conv_block(self, dim, padding_type, norm_layer, use_dropout, use_bias):
            conv_block = []
            pad, p = self.padding(padding_type)
            conv_block += pad
            conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim), nn.ReLU(True)]
            if use_dropout:
                conv_block += [nn.Dropout(0.5)]
            pad, p = self.padding(padding_type)
            conv_block += pad
            conv_block += [nn.Conv2d(dim, dim, kernel_size=3, padding=p, bias=use_bias), norm_layer(dim)]
            return nn.Sequential(*conv_block)

        def forward(self, x):
            """Forward function (with skip connections)"""
            out = x + self.conv_block(x)  # add skip connections
            return out

    class ResnetGenerator(nn.Module):
        def __init__(self, input_nc, output_nc, ngf=64, norm_layer=nn.BatchNorm2d, use_dropout=False, n_blocks=6,
                     padding_type='reflect'):
            assert(n_blocks >= 0)
            super(ResnetGenerator, self).__init__()
            if type(norm_layer) == functools.partial:
                use_bias = norm_layer.func == nn.InstanceNorm2d
            else:
                use_bias = norm_layer == nn.InstanceNorm2d
            model = [nn.ReflectionPad2d(3),
                     nn.Conv2d(input_nc, ngf, kernel_size=7, padding=0, bias=use_bias),
                     norm_layer(ngf),
                     nn.ReLU(True)]
            n_downsampling = 2
            for i in range(n_downsampling):  # add downsampling layers
                mult = 2 ** i
                model += [nn.Conv2d(ngf * mult, ngf * mult * 2, kernel_size=3, stride=2, padding=1, bias=use_bias),
                          norm_layer(ngf * mult * 2),
                          nn.ReLU(True)]
            mult = 2 ** n_downsampling
            for i in range(n_blocks):       # add ResNet blocks
                model += [ResnetBlock(ngf * mult, padding_type=padding_type, norm_layer=norm_layer,
                                      use_dropout=use_dropout, use_bias=use_bias)]
            for i in range(n_downsampling):  # add upsampling layers
                mult = 2 ** (n_downsampling - i)
                model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2),
                                             kernel_size=3, stride=2,
                                             padding=1, output_padding=1,
                                             bias=use_bias),
                          norm_layer(int(ngf * mult / 2)),
                          nn.ReLU(True)]
            model += [nn.ReflectionPad2d(3)]
            model += [nn.Conv2d(ngf, output_nc, kernel_size=7, padding=0)]
            model += [nn.Tanh()]
            self.model = nn.Sequential(*model)

        def forward(self, input):
            """Standard forward"""
            return self.model(input)

    class UnetSkipConnectionBlock(nn.Module):
        """Defines the Unet submodule with skip connection.
            X -------------------identity----------------------
            |-- downsampling -- |submodule| -- upsampling --|
        """
        def __init__(self, outer_nc, inner_nc, input_nc=None, submodule=None, outermost=False, innermost=False,
                     norm_layer=nn.BatchNorm2d, use_dropout=False):
            super(UnetSkipConnectionBlock, self).__init__()
            self.outermost = outermost
            if type(norm_layer) == functools.partial:
                use_bias = norm_layer.func == nn.InstanceNorm2d
            else:
                use_bias = norm_layer == nn.InstanceNorm2d
            if input_nc is None:
                input_nc = outer_nc
            downconv = nn.Conv2d(input_nc, inner_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
            downrelu = nn.LeakyReLU(0.2, True)
            downnorm = norm_layer(inner_nc)
            uprelu = nn.ReLU(True)
            upnorm = norm_layer(outer_nc)

            if outermost:
                upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1)
                down = [downconv]
                up = [uprelu, upconv, nn.Tanh()]
                model = down + [submodule] + up
            elif innermost:
                upconv = nn.ConvTranspose2d(inner_nc, outer_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
                down = [downrelu, downconv]
                up = [uprelu, upconv, upnorm]
                model = down + up
            else:
                upconv = nn.ConvTranspose2d(inner_nc * 2, outer_nc, kernel_size=4, stride=2, padding=1, bias=use_bias)
                down = [downrelu, downconv, downnorm]
                up = [uprelu, upconv, upnorm]
                if use_dropout:
                    model = down + [submodule] + up + [nn.Dropout(0.5)]
                else:
                    model = down + [submodule] + up
            self.model = nn.Sequential(*model)

        def forward(self, x):
            if self.outermost:
                return self.model(x)
            else:   # add skip connections
                return torch.cat([x, self.model(x)], 1)

    class UnetGenerator(nn.Module):
        """Create a Unet-based generator"""
        def __init__(self, input_nc, output_nc, num_downs, ngf=64, norm_layer=nn.BatchNorm2d, use_dropout=False):
            super(UnetGenerator, self).__init__()
            # construct unet structure
            unet_block = UnetSkipConnectionBlock(ngf * 8, ngf * 8, input_nc=None, submodule=None,
                                                 norm_layer=norm_layer, innermost=True)  # add the innermost layer
            for i in range(num_downs - 5):          # add intermediate layers with ngf * 8 filters
                unet_block = UnetSkipConnectionBlock(ngf * 8, ngf * 8, input_nc=None, submodule=unet_block,
                                                     norm_layer=norm_layer, use_dropout=use_dropout)
            # gradually reduce the number of filters from ngf * 8 to ngf
            unet_block = UnetSkipConnectionBlock(ngf * 4, ngf * 8, input_nc=None, submodule=unet_block,
                                                 norm_layer=norm_layer)
            unet_block = UnetSkipConnectionBlock(ngf * 2, ngf * 4, input_nc=None, submodule=unet_block,
                                                 norm_layer=norm_layer)
            unet_block = UnetSkipConnectionBlock(ngf, ngf * 2, input_nc=None, submodule=unet_block,
                                                 norm_layer=norm_layer)
            self.model = UnetSkipConnectionBlock(output_nc, ngf, input_nc=input_nc, submodule=unet_block,
                                                 outermost=True, norm_layer=norm_layer)  # add the outermost layer

        def forward(self, input):
            """Standard forward"""
            return self.model(input)

    class NLayerDiscriminator(nn.Module):
        """Defines a PatchGAN discriminator"""
        def __init__(self, input_nc, ndf=64, n_layers=3, norm_layer=nn.BatchNorm2d):
            super(NLayerDiscriminator, self).__init__()
            if type(norm_layer) == functools.partial:  # no need to use bias as BatchNorm2d has affine parameters
                use_bias = norm_layer.func == nn.InstanceNorm2d
            else:
                use_bias = norm_layer == nn.InstanceNorm2d
            kw = 4
            padw = 1
            sequence = [nn.Conv2d(input_nc, ndf, kernel_size=kw, stride=2, padding=padw), nn.LeakyReLU(0.2, True)]
            nf_mult = 1
            nf_mult_prev = 1
            for n in range(1, n_layers):  # gradually increase the number of filters
                nf_mult_prev = nf_mult
                nf_mult = min(2 ** n, 8)
                sequence += [
                    nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=2, padding=padw, bias=use_bias),
                    norm_layer(ndf * nf_mult),
                    nn.LeakyReLU(0.2, True)
                ]
            nf_mult_prev = nf_mult
            nf_mult = min(2 ** n_layers, 8)
            sequence += [
                nn.Conv2d(ndf * nf_mult_prev, ndf * nf_mult, kernel_size=kw, stride=1, padding=padw, bias=use_bias),
                norm_layer(ndf * nf_mult),
                nn.LeakyReLU(0.2, True)
            ]
            sequence += [nn.Conv2d(ndf * nf_mult, 1, kernel_size=kw, stride=1, padding=padw)]
            self.model = nn.Sequential(*sequence)

        def forward(self, input):
            """Standard forward."""
            return self.model(input)

    class GANLoss(nn.Module):
        def __init__(self, gan_mode, target_real_label=1.0, target_fake_label=0.0):
            super(GANLoss, self).__init__()
            self.register_buffer('real_label', torch.tensor(target_real_label))
            self.register_buffer('fake_label', torch.tensor(target_fake_label))
            self.gan_mode = gan_mode
            if gan_mode == 'lsgan':
                self.loss = nn.MSELoss()
            elif gan_mode == 'vanilla':
                self.loss = nn.BCEWithLogitsLoss()
            else:
                raise NotImplementedError('gan mode %s not implemented' % gan_mode)

        def get_target_tensor(self, prediction, target_is_real):
            if target_is_real:
                target_tensor = self.real_label
            else:
                target_tensor = self.fake_label
            return target_tensor.expand_as(prediction)

        def __call__(self, prediction, target_is_real):
            target_tensor = self.get_target_tensor(prediction, target_is_real)
            loss = self.loss(prediction, target_tensor)
            return loss

    class ImagePool():
        """This class implements an image buffer that stores previously generated images."""
        def __init__(self, pool_size):
            self.pool_size = pool_size
            if self.pool_size > 0:  # create an empty pool
                self.num_imgs = 0
                self.images = []

        def query(self, images):
            if self.pool_size == 0:  # if the buffer size is 0, do nothing
                return images
            return_images = []
            for image in images:
                image = torch.unsqueeze(image.data, 0)
                if self.num_imgs < self.pool_size:   # if the buffer is not full; keep inserting current images
                    self.num_imgs = self.num_imgs + 1
                    self.images.append(image)
                    return_images.append(image)
                else:
                    p = random.uniform(0, 1)
                    if p > 0.5:  # by 50% chance, the buffer will return a previously stored image
                        random_id = random.randint(0, self.pool_size - 1)  # randint is inclusive
                        tmp = self.images[random_id].clone()
                        self.images[random_id] = image
                        return_images.append(tmp)
                    else:       # by another 50% chance, the buffer will return the current image
                        return_images.append(image)
            return_images = torch.cat(return_images, 0)   # collect all the images and return them
            return return_images

    return dict(get_norm_layer=get_norm_layer, init_weights=init_weights, ResnetGenerator=ResnetGenerator,
                UnetGenerator=UnetGenerator, NLayerDiscriminator=NLayerDiscriminator, GANLoss=GANLoss,
                ImagePool=ImagePool)


def set_requires_grad(nets, requires_grad=False):
    """Set requies_grad=Fasle for all the networks to avoid unnecessary computations"""
    if not isinstance(nets, list):
        nets = [nets]
    for net in nets:
        if net is not None:
            for param in net.parameters():
                param.requires_grad = requires_grad


def noise_free_state(torch, model):
    """model's state_dict as NumPy without the biases of convolutions that feed an InstanceNorm2d:
    the norm subtracts each channel's mean, so their true gradient is zero and what they get is
    rounding noise, which Adam scales up to lr-sized steps that differ between any two libraries."""
    feeding = set()
    for name, seq in model.named_modules():
        if isinstance(seq, torch.nn.Sequential):
            children = list(seq.named_children())
            for (key, layer), (_, after) in zip(children, children[1:]):
                if isinstance(after, torch.nn.InstanceNorm2d) and getattr(layer, "bias", None) is not None:
                    feeding.add(f"{name}.{key}.bias" if name else f"{key}.bias")
    assert feeding, "no bias feeds a norm"
    return {k: numpy_of(v) for k, v in model.state_dict().items() if k not in feeding}


def images(n, size, seed):
    rng = np.random.default_rng(seed)
    return [np.tanh(rng.standard_normal((1, 3, size, size))).astype(np.float32) for _ in range(n)]


def cyclegan(torch, init=None, steps=3, size=32, n_epochs=1, n_epochs_decay=2):
    nn = torch.nn
    torch.manual_seed(0)
    random.seed(0)
    net = networks(torch)
    norm_layer = net["get_norm_layer"]('instance')
    netG_A = net["ResnetGenerator"](3, 3, ngf=8, norm_layer=norm_layer, n_blocks=2)
    netG_B = net["ResnetGenerator"](3, 3, ngf=8, norm_layer=norm_layer, n_blocks=2)
    netD_A = net["NLayerDiscriminator"](3, ndf=8, n_layers=2, norm_layer=norm_layer)
    netD_B = net["NLayerDiscriminator"](3, ndf=8, n_layers=2, norm_layer=norm_layer)
    nets = {"G_A": netG_A, "G_B": netG_B, "D_A": netD_A, "D_B": netD_B}
    for m in nets.values():
        net["init_weights"](m, 'normal', 0.02)
    result = {}
    start_from(torch, nets, init, result)
    criterionGAN = net["GANLoss"]('lsgan')
    criterionCycle = torch.nn.L1Loss()
    criterionIdt = torch.nn.L1Loss()
    fake_A_pool, fake_B_pool = net["ImagePool"](2), net["ImagePool"](2)
    optimizer_G = torch.optim.Adam(itertools.chain(netG_A.parameters(), netG_B.parameters()), lr=0.0002,
                                   betas=(0.5, 0.999))
    optimizer_D = torch.optim.Adam(itertools.chain(netD_A.parameters(), netD_B.parameters()), lr=0.0002,
                                   betas=(0.5, 0.999))

    def lambda_rule(epoch):
        lr_l = 1.0 - max(0, epoch + 1 - n_epochs) / float(n_epochs_decay + 1)
        return lr_l
    schedulers = [torch.optim.lr_scheduler.LambdaLR(o, lr_lambda=lambda_rule) for o in (optimizer_G, optimizer_D)]

    def backward_D_basic(netD, real, fake):
        # Real
        pred_real = netD(real)
        loss_D_real = criterionGAN(pred_real, True)
        # Fake
        pred_fake = netD(fake.detach())
        loss_D_fake = criterionGAN(pred_fake, False)
        # Combined loss and calculate gradients
        loss_D = (loss_D_real + loss_D_fake) * 0.5
        loss_D.backward()
        return loss_D

    A, B = images(steps, size, 1), images(steps, size, 2)
    lambda_idt, lambda_A, lambda_B = 0.5, 10.0, 10.0
    losses, lrs = [], []
    for step in range(steps):
        real_A, real_B = torch.from_numpy(A[step]), torch.from_numpy(B[step])
        # forward
        fake_B = netG_A(real_A)  # G_A(A)
        rec_A = netG_B(fake_B)   # G_B(G_A(A))
        fake_A = netG_B(real_B)  # G_B(B)
        rec_B = netG_A(fake_A)   # G_A(G_B(B))
        # G_A and G_B
        set_requires_grad([netD_A, netD_B], False)  # Ds require no gradients when optimizing Gs
        optimizer_G.zero_grad()  # set G_A and G_B's gradients to zero
        idt_A = netG_A(real_B)
        loss_idt_A = criterionIdt(idt_A, real_B) * lambda_B * lambda_idt
        idt_B = netG_B(real_A)
        loss_idt_B = criterionIdt(idt_B, real_A) * lambda_A * lambda_idt
        loss_G_A = criterionGAN(netD_A(fake_B), True)
        loss_G_B = criterionGAN(netD_B(fake_A), True)
        loss_cycle_A = criterionCycle(rec_A, real_A) * lambda_A
        loss_cycle_B = criterionCycle(rec_B, real_B) * lambda_B
        loss_G = loss_G_A + loss_G_B + loss_cycle_A + loss_cycle_B + loss_idt_A + loss_idt_B
        loss_G.backward()
        optimizer_G.step()       # update G_A and G_B's weights
        # D_A and D_B
        set_requires_grad([netD_A, netD_B], True)
        optimizer_D.zero_grad()   # set D_A and D_B's gradients to zero
        loss_D_A = backward_D_basic(netD_A, real_B, fake_B_pool.query(fake_B))
        loss_D_B = backward_D_basic(netD_B, real_A, fake_A_pool.query(fake_A))
        optimizer_D.step()  # update D_A and D_B's weights
        for scheduler in schedulers:
            scheduler.step()
        lrs.append(optimizer_G.param_groups[0]['lr'])
        losses.append([t.item() for t in (loss_G_A, loss_G_B, loss_cycle_A, loss_cycle_B, loss_idt_A, loss_idt_B,
                                          loss_D_A, loss_D_B)])
    result.update(losses=losses, lrs=lrs, fake_B=numpy_of(fake_B), no_grad=[p.grad is None for p in netD_A.parameters()],
                  G_A=noise_free_state(torch, netG_A))
    return result


def pix2pix(torch, init=None, steps=3, size=32, lambda_L1=100.0):
    torch.manual_seed(0)
    net = networks(torch)
    norm_layer = net["get_norm_layer"]('batch')
    netG = net["UnetGenerator"](3, 3, 5, ngf=8, norm_layer=norm_layer, use_dropout=False)
    netD = net["NLayerDiscriminator"](3 + 3, ndf=8, n_layers=2, norm_layer=norm_layer)
    nets = {"G": netG, "D": netD}
    for m in nets.values():
        net["init_weights"](m, 'normal', 0.02)
    result = {}
    start_from(torch, nets, init, result)
    criterionGAN = net["GANLoss"]('vanilla')
    criterionL1 = torch.nn.L1Loss()
    optimizer_G = torch.optim.Adam(netG.parameters(), lr=0.0002, betas=(0.5, 0.999))
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=0.0002, betas=(0.5, 0.999))
    A = [np.concatenate(p) for p in zip(images(steps, size, 3), images(steps, size, 4))]
    losses = []
    for step in range(steps):
        real_A = torch.from_numpy(A[step])
        real_B = torch.flip(real_A, [3]) * 0.5
        fake_B = netG(real_A)  # G(A)
        # update D
        set_requires_grad(netD, True)  # enable backprop for D
        optimizer_D.zero_grad()     # set D's gradients to zero
        fake_AB = torch.cat((real_A, fake_B), 1)  # we use conditional GANs; we need to feed both input and output
        pred_fake = netD(fake_AB.detach())
        loss_D_fake = criterionGAN(pred_fake, False)
        real_AB = torch.cat((real_A, real_B), 1)
        pred_real = netD(real_AB)
        loss_D_real = criterionGAN(pred_real, True)
        loss_D = (loss_D_fake + loss_D_real) * 0.5
        loss_D.backward()
        optimizer_D.step()          # update D's weights
        # update G
        set_requires_grad(netD, False)  # D requires no gradients when optimizing G
        optimizer_G.zero_grad()        # set G's gradients to zero
        fake_AB = torch.cat((real_A, fake_B), 1)
        pred_fake = netD(fake_AB)
        loss_G_GAN = criterionGAN(pred_fake, True)
        loss_G_L1 = criterionL1(fake_B, real_B) * lambda_L1
        loss_G = loss_G_GAN + loss_G_L1
        loss_G.backward()
        optimizer_G.step()             # update G's weights
        losses.append([t.item() for t in (loss_D_fake, loss_D_real, loss_G_GAN, loss_G_L1)])
    netG.eval()
    with torch.no_grad():
        test = netG(torch.from_numpy(A[0]))
    result.update(losses=losses, pred_shape=tuple(pred_fake.shape), test=numpy_of(test),
                  G={k: numpy_of(v) for k, v in netG.state_dict().items()})
    return result


def test_cyclegan_resnet_generators_instance_norm():
    ref, got = compare_program(cyclegan, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(ref["lrs"], [2e-4 * 2 / 3, 2e-4 / 3, 0], atol=1e-12)  # the linear decay
    assert ref["fake_B"].shape == (1, 3, 32, 32) and ref["no_grad"] == [False] * len(ref["no_grad"])


def test_pix2pix_unet_patchgan():
    ref, got = compare_program(pix2pix, rtol=1e-3, atol=1e-4)
    assert ref["pred_shape"] == (2, 1, 6, 6)
