"""LLMs-from-scratch's "Direct Preference Optimization (DPO) for LLM Alignment (From Scratch)"
(ch07/04_preference-tuning-with-dpo/dpo-from-scratch.ipynb) as written, at a toy size, with the
book's regex tokenizer standing in for tiktoken, the chapter 4 GPTModel of test_llms_from_scratch,
and the preference JSON replaced by a few entries of its form (instruction, input, output, chosen,
rejected): PreferenceDataset (prompt, chosen and rejected token lists), custom_collate_fn (padding to
the longest chosen/rejected + 1, boolean masks by torch.ones(len(padded)).bool() with mask[len:] = False
and the prompt masked by mask[:prompt.shape[0] + 2] = False, torch.stack, allowed_max_length) through
functools.partial into DataLoader(shuffle=True, drop_last=True); the SFT checkpoint written by
torch.save and read into the policy and the reference model by torch.load(map_location=...,
weights_only=True); compute_dpo_loss (-F.logsigmoid(beta * logits), rewards detached),
compute_logprobs (labels[:, 1:].clone(), F.log_softmax, torch.gather(input=..., dim=-1,
index=labels.unsqueeze(-1)).squeeze(-1), the masked average by selection_mask[:, 1:].clone()),
compute_dpo_loss_batch with the reference under torch.no_grad(), the loader averages, and
train_model_dpo_simple (AdamW, evaluation every eval_freq steps printing the losses and reward
margins, a generated sample per epoch). Seeds are torch.manual_seed in both libraries, so the
weights, shuffles and dropout agree."""
from functools import partial

from prog_helpers import compare_in_folders, numpy_of, start_from
from test_llms_from_scratch import GPT_CONFIG, INSTRUCTIONS, book, format_input, logged, make_tokenizer

PREFERENCES = [
    {**e, "chosen": e["output"], "rejected": r} for e, r in zip(INSTRUCTIONS, [
        "the painting.", "the villa was rich.", "It was no surprise.", "the widow was dropped.",
        "the Riviera."])
]


def dpo(torch, init=None, path=None, num_epochs=2):
    F = torch.nn.functional
    b = book(torch)
    extra = " ".join(format_input(e) + f"\n\n### Response:\n{e['chosen']} {e['rejected']}" for e in PREFERENCES)
    tokenizer, vocab = make_tokenizer(extra)
    Dataset, DataLoader = torch.utils.data.Dataset, torch.utils.data.DataLoader
    device = torch.device("cpu")

    class PreferenceDataset(Dataset):
        def __init__(self, data, tokenizer):
            self.data = data

            # Pre-tokenize texts
            self.encoded_texts = []
            for entry in data:
                prompt = format_input(entry)
                rejected_response = entry["rejected"]
                chosen_response = entry["chosen"]

                prompt_tokens = tokenizer.encode(prompt)
                chosen_full_text = f"{prompt}\n\n### Response:\n{chosen_response}"
                rejected_full_text = f"{prompt}\n\n### Response:\n{rejected_response}"
                chosen_full_tokens = tokenizer.encode(chosen_full_text)
                rejected_full_tokens = tokenizer.encode(rejected_full_text)

                self.encoded_texts.append({
                    "prompt": prompt_tokens,
                    "chosen": chosen_full_tokens,
                    "rejected": rejected_full_tokens,
                })

        def __getitem__(self, index):
            return self.encoded_texts[index]

        def __len__(self):
            return len(self.data)

    def custom_collate_fn(
        batch,
        pad_token_id=vocab["<|endoftext|>"],
        allowed_max_length=None,
        mask_prompt_tokens=True,
        device="cpu"
    ):
        # Initialize lists to hold batch data
        batch_data = {
            "prompt": [],
            "chosen": [],
            "rejected": [],
            "rejected_mask": [],
            "chosen_mask": []

        }

        # Determine the longest sequence to set a common padding length
        max_length_common = 0
        if batch:
            for key in ["chosen", "rejected"]:
                current_max = max(len(item[key]) + 1 for item in batch)
                max_length_common = max(max_length_common, current_max)

        # Process each item in the batch
        for item in batch:
            prompt = torch.tensor(item["prompt"])
            batch_data["prompt"].append(prompt)

            for key in ["chosen", "rejected"]:
                # Adjust padding according to the common maximum length
                sequence = item[key]
                padded = sequence + [pad_token_id] * (max_length_common - len(sequence))
                mask = torch.ones(len(padded)).bool()

                # Set mask for all padding tokens to False
                mask[len(sequence):] = False

                # Set mask for all input tokens to False
                # +2 sets the 2 newline ("\n") tokens before "### Response" to False
                if mask_prompt_tokens:
                    mask[:prompt.shape[0] + 2] = False

                batch_data[key].append(torch.tensor(padded))
                batch_data[f"{key}_mask"].append(mask)

        # Final processing
        for key in ["chosen", "rejected", "chosen_mask", "rejected_mask"]:
            # Stack all sequences into a tensor for the given key
            tensor_stack = torch.stack(batch_data[key])

            # Optionally truncate to maximum sequence length
            if allowed_max_length is not None:
                tensor_stack = tensor_stack[:, :allowed_max_length]

            # Move to the specified device
            batch_data[key] = tensor_stack.to(device)

        return batch_data

    cfg = {**GPT_CONFIG, "vocab_size": len(vocab), "context_length": 48, "drop_rate": 0.0}
    customized_collate_fn = partial(
        custom_collate_fn,
        device=device,            # Put the data directly on a GPU if available
        mask_prompt_tokens=True,  # This is optional
        allowed_max_length=cfg["context_length"]  # The supported context length of the model
    )
    example_data = PREFERENCES[:2]
    example_dataloader = DataLoader(PreferenceDataset(example_data, tokenizer), batch_size=2,
                                    collate_fn=customized_collate_fn, shuffle=False)
    example_batch = next(iter(example_dataloader))
    result = {"example": {k: numpy_of(v) for k, v in example_batch.items() if k != "prompt"},
              "example_prompts": [numpy_of(p) for p in example_batch["prompt"]]}

    torch.manual_seed(123)
    train_loader = DataLoader(PreferenceDataset(PREFERENCES[:4], tokenizer), batch_size=2,
                              collate_fn=customized_collate_fn, shuffle=True, drop_last=True, num_workers=0)
    val_loader = DataLoader(PreferenceDataset(PREFERENCES[4:], tokenizer), batch_size=2,
                            collate_fn=customized_collate_fn, shuffle=False, drop_last=False, num_workers=0)

    # The instruction-finetuned ("SFT") checkpoint both models start from
    sft = b["GPTModel"](cfg)
    start_from(torch, sft, init, result)
    torch.save(sft.state_dict(), f"{path}/gpt2-sft.pth")

    policy_model = b["GPTModel"](cfg)
    policy_model.load_state_dict(torch.load(f"{path}/gpt2-sft.pth", map_location=torch.device("cpu"),
                                            weights_only=True))
    policy_model.eval()

    reference_model = b["GPTModel"](cfg)
    reference_model.load_state_dict(torch.load(f"{path}/gpt2-sft.pth", map_location=torch.device("cpu"),
                                               weights_only=True))
    reference_model.eval()

    policy_model.to(device)
    reference_model.to(device)

    def compute_dpo_loss(
          model_chosen_logprobs,
          model_rejected_logprobs,
          reference_chosen_logprobs,
          reference_rejected_logprobs,
          beta=0.1,
    ):
        model_logratios = model_chosen_logprobs - model_rejected_logprobs
        reference_logratios = reference_chosen_logprobs - reference_rejected_logprobs
        logits = model_logratios - reference_logratios

        # DPO (Eq. 7 of https://arxiv.org/pdf/2305.18290.pdf)
        losses = -F.logsigmoid(beta * logits)

        # Optional values to track progress during training
        chosen_rewards = (model_chosen_logprobs - reference_chosen_logprobs).detach()
        rejected_rewards = (model_rejected_logprobs - reference_rejected_logprobs).detach()

        # .mean() to average over the samples in the batch
        return losses.mean(), chosen_rewards.mean(), rejected_rewards.mean()

    def compute_logprobs(logits, labels, selection_mask=None):
        # Labels are the inputs shifted by one
        labels = labels[:, 1:].clone()

        # Truncate logits to match the labels num_tokens
        logits = logits[:, :-1, :]

        log_probs = F.log_softmax(logits, dim=-1)

        # Gather the log probabilities for the actual labels
        selected_log_probs = torch.gather(
            input=log_probs,
            dim=-1,
            index=labels.unsqueeze(-1)
        ).squeeze(-1)

        if selection_mask is not None:
            mask = selection_mask[:, 1:].clone()

            # Apply the mask to filter out padding tokens
            selected_log_probs = selected_log_probs * mask

            # Calculate the average log probability excluding padding tokens
            # This averages over the tokens, so the shape is (batch_size,)
            avg_log_prob = selected_log_probs.sum(-1) / mask.sum(-1)

            return avg_log_prob

        else:
            return selected_log_probs.mean(-1)

    def compute_dpo_loss_batch(batch, policy_model, reference_model, beta):
        """Compute the DPO loss on an input batch"""

        # where policy_model(batch["chosen"]) are the logits
        policy_chosen_log_probas = compute_logprobs(
            logits=policy_model(batch["chosen"]),
            labels=batch["chosen"],
            selection_mask=batch["chosen_mask"]
        )
        policy_rejected_log_probas = compute_logprobs(
            logits=policy_model(batch["rejected"]),
            labels=batch["rejected"],
            selection_mask=batch["rejected_mask"]
        )

        with torch.no_grad():
            ref_chosen_log_probas = compute_logprobs(
                logits=reference_model(batch["chosen"]),
                labels=batch["chosen"],
                selection_mask=batch["chosen_mask"]
            )
            ref_rejected_log_probas = compute_logprobs(
                logits=reference_model(batch["rejected"]),
                labels=batch["rejected"],
                selection_mask=batch["rejected_mask"]
            )
        loss, chosen_rewards, rejected_rewards = compute_dpo_loss(
            model_chosen_logprobs=policy_chosen_log_probas,
            model_rejected_logprobs=policy_rejected_log_probas,
            reference_chosen_logprobs=ref_chosen_log_probas,
            reference_rejected_logprobs=ref_rejected_log_probas,
            beta=beta
        )
        return loss, chosen_rewards, rejected_rewards

    def compute_dpo_loss_loader(data_loader, policy_model, reference_model, beta, num_batches=None):
        """Apply compute_dpo_loss_batch to a whole data loader"""

        total_loss, total_chosen_rewards, total_rejected_rewards = 0., 0., 0.
        if len(data_loader) == 0:
            return float("nan")

        elif num_batches is None:
            num_batches = len(data_loader)
        else:
            # Reduce the number of batches to match the total number of batches in the data loader
            # if num_batches exceeds the number of batches in the data loader
            num_batches = min(num_batches, len(data_loader))
        for i, batch in enumerate(data_loader):
            if i < num_batches:
                loss, chosen_rewards, rejected_rewards = compute_dpo_loss_batch(
                    batch=batch,
                    policy_model=policy_model,
                    reference_model=reference_model,
                    beta=beta
                )
                total_loss += loss.item()
                total_chosen_rewards += chosen_rewards.item()
                total_rejected_rewards += rejected_rewards.item()

            else:
                break

        # calculate average
        total_loss /= num_batches
        total_chosen_rewards /= num_batches
        total_rejected_rewards /= num_batches
        return total_loss, total_chosen_rewards, total_rejected_rewards

    def evaluate_dpo_loss_loader(policy_model, reference_model, train_loader, val_loader, beta, eval_iter):
        """Compute the DPO loss for the training and validation dataset"""

        policy_model.eval()
        with torch.no_grad():
            train_loss, train_chosen_rewards, train_rejected_rewards = compute_dpo_loss_loader(
                data_loader=train_loader,
                policy_model=policy_model,
                reference_model=reference_model,
                beta=beta,
                num_batches=eval_iter
            )

            val_loss, val_chosen_rewards, val_rejected_rewards = compute_dpo_loss_loader(
                data_loader=val_loader,
                policy_model=policy_model,
                reference_model=reference_model,
                beta=beta,
                num_batches=eval_iter
            )

        res = {
            "train_loss": train_loss,
            "train_chosen_reward": train_chosen_rewards,
            "train_rejected_reward": train_rejected_rewards,
            "val_loss": val_loss,
            "val_chosen_reward": val_chosen_rewards,
            "val_rejected_reward": val_rejected_rewards
        }

        policy_model.train()
        return res

    def train_model_dpo_simple(
        policy_model, reference_model, train_loader, val_loader,
        optimizer, num_epochs, beta,
        eval_freq, eval_iter, start_context, tokenizer
    ):

        # Initialize lists to track losses and tokens seen
        tracking = {
            "train_losses": [],
            "train_chosen_rewards": [],
            "train_rejected_rewards": [],
            "val_losses": [],
            "val_chosen_rewards": [],
            "val_rejected_rewards": [],
            "tokens_seen": []
        }
        tokens_seen, global_step = 0, -1

        # Main training loop
        for epoch in range(num_epochs):
            policy_model.train()  # Set model to training mode

            for batch_idx, batch in enumerate(train_loader):

                optimizer.zero_grad()  # Reset loss gradients from previous batch iteration

                loss, chosen_rewards, rejected_rewards = compute_dpo_loss_batch(
                    batch=batch,
                    policy_model=policy_model,
                    reference_model=reference_model,
                    beta=beta
                )

                loss.backward()  # Calculate loss gradients
                optimizer.step()  # Update model weights using loss gradients

                tokens_seen += batch["chosen"].numel()
                global_step += 1

                # Optional evaluation step
                if global_step % eval_freq == 0:
                    res = evaluate_dpo_loss_loader(
                        policy_model=policy_model,
                        reference_model=reference_model,
                        train_loader=train_loader,
                        val_loader=val_loader,
                        beta=beta,
                        eval_iter=eval_iter
                    )
                    tracking["train_losses"].append(res["train_loss"])
                    tracking["train_chosen_rewards"].append(res["train_chosen_reward"])
                    tracking["train_rejected_rewards"].append(res["train_rejected_reward"])
                    tracking["val_losses"].append(res["val_loss"])
                    tracking["val_chosen_rewards"].append(res["val_chosen_reward"])
                    tracking["val_rejected_rewards"].append(res["val_rejected_reward"])
                    tracking["tokens_seen"].append(tokens_seen)
                    train_reward_margin = res["train_chosen_reward"] - res["train_rejected_reward"]
                    val_reward_margin = res["val_chosen_reward"] - res["val_rejected_reward"]

                    print(
                        f"Ep {epoch+1} (Step {global_step:06d}): "
                        f"Train loss {res['train_loss']:.3f}, Val loss {res['val_loss']:.3f}, "
                        f"Train reward margins {train_reward_margin:.3f}, "
                        f"Val reward margins {val_reward_margin:.3f}"
                    )

            # Print a sample text after each epoch
            b["generate_and_print_sample"](
                model=policy_model,
                tokenizer=tokenizer,
                device=loss.device,
                start_context=start_context
            )

        return tracking

    res = evaluate_dpo_loss_loader(policy_model=policy_model, reference_model=reference_model,
                                   train_loader=train_loader, val_loader=val_loader, beta=0.1, eval_iter=5)
    result["before"] = res
    torch.manual_seed(123)
    optimizer = torch.optim.AdamW(policy_model.parameters(), lr=5e-3, weight_decay=0.01)
    tracking, log = logged(
        train_model_dpo_simple,
        policy_model=policy_model,
        reference_model=reference_model,
        train_loader=train_loader,
        val_loader=val_loader,
        optimizer=optimizer,
        num_epochs=num_epochs,
        beta=0.1,  # value between 0.1 and 0.5
        eval_freq=1,
        eval_iter=5,
        start_context=format_input(PREFERENCES[4]),
        tokenizer=tokenizer
    )
    result.update(tracking=tracking, log=log, state={k: numpy_of(v) for k, v in policy_model.state_dict().items()},
                  reference={k: numpy_of(v) for k, v in reference_model.state_dict().items()})
    return result


def test_llms_from_scratch_dpo(tmp_path):
    ref, got = compare_in_folders(dpo, tmp_path, "path", rtol=1e-3, atol=1e-4)
    assert "Train reward margins" in got["log"] and len(got["tracking"]["train_losses"]) == 4
